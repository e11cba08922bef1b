/** A picked or dropped file's bytes as the API takes them (browser only: FileReader). */

/** A file as the PDF tools take it: its bytes as a data: URL (the service accepts the prefix for PDFs). */
export function readAsDataUrl(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error(`Could not read ${file.name}.`));
    reader.readAsDataURL(file);
  });
}

/** A file's bytes as plain base64 (a certificate upload takes no data: prefix). */
export async function readAsBase64(file: File): Promise<string> {
  const url = await readAsDataUrl(file);
  return url.slice(url.indexOf(',') + 1);
}
