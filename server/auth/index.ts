/** Public API of the panel's auth module; see README.md. */
export * from "./types";
export { randomToken, sha256Hex, tokensEqual, bearerToken, TOKEN_RE } from "./crypto";
export { hashPassword, verifyPassword, passwordProblem, needsRehash, PASSWORD_MIN_LENGTH, PASSWORD_MAX_LENGTH, ARGON2_OPTIONS } from "./passwords";
export * from "./users";
export {
  USERNAME_MAX_LENGTH,
  usernameProblem,
  UNIT_PATTERN_MAX_LENGTH,
  unitPatternProblem,
  USERS_LOCK,
  parsePatterns,
  toUser,
  countEnabledAdmins,
} from "./userFields";
export * from "./sessions";
export * from "./rateLimit";
export * from "./authorize";
export * from "./proxy";
export * from "./audit";
export * from "./guard";
export * from "./panelAuth";
