"use client";
/**
 * The user name and password fields of the sign-in and the first-run setup forms: one shape, so
 * the two cannot drift (labels, limits, autocomplete). `newPassword` is the setup's variant: a
 * password being chosen, at least 12 characters, with the rule under it.
 */
import { inputClass, PASSWORD_HINT } from "./shared";

export function CredentialFields({
  username,
  password,
  onUsername,
  onPassword,
  newPassword = false,
  autoFocus = false,
}: {
  username: string;
  password: string;
  onUsername: (value: string) => void;
  onPassword: (value: string) => void;
  newPassword?: boolean;
  autoFocus?: boolean;
}) {
  return (
    <>
      <label className="block text-sm">
        <span className="mb-1 block font-medium">User name</span>
        <input
          className={inputClass}
          name="username"
          autoComplete="username"
          autoFocus={autoFocus}
          required
          maxLength={128}
          value={username}
          onChange={(e) => onUsername(e.target.value)}
        />
      </label>
      <label className="block text-sm">
        <span className="mb-1 block font-medium">Password</span>
        <input
          className={inputClass}
          name="password"
          type="password"
          autoComplete={newPassword ? "new-password" : "current-password"}
          required
          minLength={newPassword ? 12 : undefined}
          maxLength={1024}
          value={password}
          onChange={(e) => onPassword(e.target.value)}
        />
        {newPassword && <span className="mt-1 block text-xs text-zinc-500 dark:text-zinc-400">{PASSWORD_HINT}</span>}
      </label>
    </>
  );
}
