/**
 * What a bearer token between the panel and an agent must look like, wherever one is given
 * (agent flags and environment, its token file, the panel's environment and agents file, the
 * Hosts page). Part of the contract: imports nothing else of the project.
 */

/** Generated tokens are 32 random bytes in base64url (43 characters); nothing shorter than 32 is accepted. */
export const AGENT_TOKEN_MIN_LENGTH = 32;
export const AGENT_TOKEN_MAX_LENGTH = 1000;

/**
 * Why `token` cannot be an agent token, or null. Only visible ASCII: it travels in an HTTP header
 * and `Bearer <token>` is compared byte for byte (a no-break space that JavaScript's trim()
 * removes must not make two tokens equal).
 */
export function agentTokenProblem(token: string): string | null {
  if (token.length === 0) return "the token is empty";
  if (token.length > AGENT_TOKEN_MAX_LENGTH) return `the token is longer than ${AGENT_TOKEN_MAX_LENGTH} characters`;
  if (!/^[\x21-\x7e]+$/.test(token)) return "the token may only contain visible ASCII characters (no spaces)";
  if (token.length < AGENT_TOKEN_MIN_LENGTH) {
    return `the token is ${token.length} characters long; at least ${AGENT_TOKEN_MIN_LENGTH} are needed (e.g. the agent's own token file, or: openssl rand -base64 32)`;
  }
  return null;
}
