import { badRequest } from '../errors.js';
// Loaded on first use: the canvas library is memory that a Cairn process without image requests never needs.
import { loadCanvas } from '../parsing/libraries.js';

/** Decodes base64 (bare or a data URI) into image bytes, rejecting what is not an image. */
export async function decodeImage(base64: string): Promise<Buffer> {
  const data = base64.replace(/^data:[\w.+/-]+;base64,/, '');
  if (!/^[A-Za-z0-9+/=\s]+$/.test(data)) throw badRequest('`image_base64` must be base64-encoded image data');
  const bytes = Buffer.from(data, 'base64');
  // Only formats the canvas decoder handles safely (it can crash on some malformed TIFF input).
  if (!isPng(bytes) && !isJpeg(bytes) && !isGif(bytes) && !isWebp(bytes)) throw badRequest('`image_base64` must be a PNG, JPEG, GIF or WebP image');
  const { loadImage } = await loadCanvas();
  try {
    await loadImage(bytes);
  } catch {
    throw badRequest('`image_base64` is not a readable image (PNG, JPEG, GIF, WebP)');
  }
  return bytes;
}

/** Places `below` under `top` (left-aligned, white background) and returns a PNG. */
export async function stackVertically(top: Uint8Array, below: Uint8Array): Promise<Buffer> {
  const { createCanvas, loadImage } = await loadCanvas();
  const [a, b] = await Promise.all([loadImage(Buffer.from(top)), loadImage(Buffer.from(below))]);
  const canvas = createCanvas(Math.max(a.width, b.width), a.height + b.height);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.drawImage(a, 0, 0);
  ctx.drawImage(b, 0, a.height);
  return canvas.encode('png');
}

/**
 * The MIME type of image bytes by their signature (PNG, JPEG, GIF, WebP, BMP, TIFF), as RAGFlow's image
 * route detects it; undefined for anything else (SVG included: it is served as a download, never rendered).
 */
export function imageContentType(b: Uint8Array): string | undefined {
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  if (isPng(buf)) return 'image/png';
  if (isJpeg(buf)) return 'image/jpeg';
  if (isGif(buf)) return 'image/gif';
  if (isWebp(buf)) return 'image/webp';
  if (buf.subarray(0, 2).toString('latin1') === 'BM') return 'image/bmp';
  const tiff = buf.subarray(0, 4).toString('hex');
  if (tiff === '49492a00' || tiff === '4d4d002a') return 'image/tiff';
  return undefined;
}

const isPng = (b: Buffer) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
const isJpeg = (b: Buffer) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff;
const isGif = (b: Buffer) => b.subarray(0, 4).toString('latin1') === 'GIF8';
const isWebp = (b: Buffer) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP';
