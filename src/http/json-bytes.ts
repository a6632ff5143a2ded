/**
 * A body's UTF-8 bytes, for the bodies the read caches keep and serve many times: a Buffer goes
 * out as is (its length is the Content-Length), where a string is measured and encoded again on
 * every answer. Its own memory, not a slice of Node's shared pool, which a cached slice would
 * keep whole.
 */
export function utf8Bytes(text: string): Buffer {
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  bytes.write(text);
  return bytes;
}

/** A JSON body serialized once into its UTF-8 bytes (utf8Bytes). */
export function jsonBytes(value: unknown): Buffer {
  return utf8Bytes(JSON.stringify(value));
}
