/** Storage for original document bytes and chunk images. Keys are '/'-separated paths. */
export interface BlobStore {
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** The bytes, or undefined when the key is missing. */
  get(key: string): Promise<Buffer | undefined>;
  delete(key: string): Promise<void>;
  /** Removes every key below the prefix (a dataset's folder). */
  deletePrefix(prefix: string): Promise<void>;
}
