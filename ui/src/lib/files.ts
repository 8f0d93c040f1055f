// Reading a file the user picked or dropped, in the webview.

/** The file's content as text (UTF-8), or as a `data:` URL. */
export function readFile(file: Blob, as: "text" | "dataUrl"): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error("the file could not be read"));
    if (as === "dataUrl") reader.readAsDataURL(file);
    else reader.readAsText(file);
  });
}
