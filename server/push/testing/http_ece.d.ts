/** The few parts of http_ece (RFC 8188 / RFC 8291) the tests use; the package ships no types. */
declare module "http_ece" {
  import type { ECDH } from "node:crypto";
  interface DecryptParams {
    version: "aes128gcm";
    privateKey: ECDH;
    authSecret: Buffer | string;
  }
  export function decrypt(buffer: Buffer, params: DecryptParams): Buffer;
  const ece: { decrypt: typeof decrypt };
  export default ece;
}
