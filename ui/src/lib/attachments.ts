// Files the user attaches to a message. Images and audio go to the model as
// they are; any other file goes to the core as it is, which reads it to text as
// the knowledge base reads files (PDF, Word, HTML, text in any encoding) or
// says why it cannot. The size limits are the core's (`attach`), checked here
// too so that the user hears at once, before sending.
import { readFile } from "./files";
import type { AttachmentInput } from "./ipc";

/** The image types every provider takes. */
export const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
/** The largest image or audio clip, in bytes. */
export const MAX_MEDIA_BYTES = 10 * 1024 * 1024;
/** The largest document, in bytes. */
export const MAX_DOCUMENT_BYTES = 20 * 1024 * 1024;

/** Why a file cannot be attached: an i18n key and its parameters. */
export interface AttachError {
  key: "composer.badType" | "composer.tooBig" | "composer.unreadable";
  params: Record<string, string | number>;
}

/** The file's bytes, base64. */
async function base64(file: File): Promise<string> {
  const url = await readFile(file, "dataUrl");
  return url.slice(url.indexOf(",") + 1);
}

const megabytes = (n: number) => (n / (1024 * 1024)).toFixed(1);

/** Reads `file` as an attachment named after it, or says why it cannot be one. */
export async function readAttachment(file: File): Promise<AttachmentInput | AttachError> {
  const name = file.name;
  const type = file.type.toLowerCase();
  const media = IMAGE_TYPES.includes(type) || type.startsWith("audio/");
  if (type.startsWith("image/") && !media) return { key: "composer.badType", params: { name, type } };
  const limit = media ? MAX_MEDIA_BYTES : MAX_DOCUMENT_BYTES;
  if (file.size > limit) return { key: "composer.tooBig", params: { name, size: megabytes(file.size), limit: limit / (1024 * 1024) } };
  try {
    const data = await base64(file);
    if (!media) return { type: "file", title: name, data };
    return type.startsWith("audio/") ? { type: "audio", mime_type: type, data, title: name } : { type: "image", mime_type: type, data, title: name };
  } catch (e) {
    return { key: "composer.unreadable", params: { name, reason: e instanceof Error ? e.message : String(e) } };
  }
}

export function isAttachError(x: AttachmentInput | AttachError): x is AttachError {
  return "key" in x;
}
