// Files the user attaches to a message. Images and audio go to the model as
// they are (base64); any other file must be text. The limits are the core's
// (`conversations::attach`), checked here too so that the user hears at once, before
// sending.
import type { AttachmentInput } from "./ipc";

/** The image types every provider takes. */
export const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
/** The largest image or audio clip, in bytes. */
export const MAX_MEDIA_BYTES = 10 * 1024 * 1024;
/** The largest text file, in bytes. */
export const MAX_TEXT_BYTES = 1024 * 1024;

/** Why a file cannot be attached: an i18n key and its parameters. */
export interface AttachError {
  key: "composer.badType" | "composer.tooBig" | "composer.notText" | "composer.unreadable";
  params: Record<string, string | number>;
}

function read(file: File, as: "dataUrl" | "text"): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error("read failed"));
    if (as === "dataUrl") reader.readAsDataURL(file);
    else reader.readAsText(file);
  });
}

const megabytes = (n: number) => (n / (1024 * 1024)).toFixed(1);

/** Reads `file` as an attachment named after it, or says why it cannot be one. */
export async function readAttachment(file: File): Promise<AttachmentInput | AttachError> {
  const name = file.name;
  const type = file.type.toLowerCase();
  const media = IMAGE_TYPES.includes(type) || type.startsWith("audio/");
  if (type.startsWith("image/") && !media) return { key: "composer.badType", params: { name, type } };
  const limit = media ? MAX_MEDIA_BYTES : MAX_TEXT_BYTES;
  if (file.size > limit) return { key: "composer.tooBig", params: { name, size: megabytes(file.size), limit: limit / (1024 * 1024) } };
  try {
    if (media) {
      const url = await read(file, "dataUrl");
      const data = url.slice(url.indexOf(",") + 1);
      return type.startsWith("audio/") ? { type: "audio", mime_type: type, data, title: name } : { type: "image", mime_type: type, data, title: name };
    }
    const text = await read(file, "text");
    // Binary files (PDFs, archives, programs) hold NUL bytes or decode to replacement characters.
    const replaced = text.split("\uFFFD").length - 1;
    if (text.includes("\u0000") || replaced > text.length / 100) return { key: "composer.notText", params: { name } };
    return { type: "text", text, title: name };
  } catch (e) {
    return { key: "composer.unreadable", params: { name, reason: e instanceof Error ? e.message : String(e) } };
  }
}

export function isAttachError(x: AttachmentInput | AttachError): x is AttachError {
  return "key" in x;
}
