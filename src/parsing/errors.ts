/** The file's extension names no format Cairn can parse. */
export class UnsupportedFormatError extends Error {
  override readonly name = 'UnsupportedFormatError';
  constructor(readonly extension: string) {
    super(`This type of file has not been supported yet: ${extension}`);
  }
}

/** The bytes could not be read as the format the file claims (or was sniffed) to be. */
export class CorruptFileError extends Error {
  override readonly name = 'CorruptFileError';
  constructor(
    readonly filename: string,
    readonly format: string,
    readonly reason: string,
  ) {
    super(`${filename} is not a readable ${format}: ${reason}`);
  }
}

/** The OCR engine itself failed (not the image): a deployment problem, not a bad file. */
export class OcrEngineError extends Error {
  override readonly name = 'OcrEngineError';
}

/**
 * The file goes over one of the parsing limits (size, decompression, nesting, pixels, or the memory or
 * time ceiling of the parser process). Retrying cannot help; the message names the limit and its setting.
 */
export class ParseLimitError extends Error {
  override readonly name = 'ParseLimitError';
  constructor(
    readonly filename: string,
    readonly reason: string,
  ) {
    super(`${filename} ${reason}`);
  }
}
