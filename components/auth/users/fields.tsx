/** Form controls of the users page: a labelled field with its hint, the role select, a new password twice. */
import { useId, type ReactNode } from "react";
import { inputClass } from "../shared";
import type { Role } from "@/server/contract/actors";

const ROLES: { value: Role; label: string }[] = [
  { value: "viewer", label: "viewer (sees, changes nothing)" },
  { value: "operator", label: "operator (acts on their units)" },
  { value: "admin", label: "admin (everything, users too)" },
];
export const PATTERN_HINT = "Unit globs, separated by commas or spaces, e.g. vllm-team-a-*. Only operators use them.";
const NEW_PASSWORD_HINT = "At least 12 characters, not the user name. Hand it over out of band.";
const labelText = "mb-1 block text-xs font-medium text-zinc-600 dark:text-zinc-400";

export type FieldProps = { id: string; "aria-describedby"?: string };

/** A labelled control; the hint is its description, not part of its name. */
export function Field({ label, hint, children }: { label: string; hint?: string; children: (props: FieldProps) => ReactNode }) {
  const id = useId();
  return (
    <div className="text-sm">
      <label htmlFor={id} className={labelText}>
        {label}
      </label>
      {children({ id, "aria-describedby": hint ? `${id}-hint` : undefined })}
      {/* zinc-600: AA (4.5:1) on the alerts' red tint too, where the acknowledgement's note has a hint */}
      {hint && (
        <p id={`${id}-hint`} className="mt-1 text-xs text-zinc-600 dark:text-zinc-400">
          {hint}
        </p>
      )}
    </div>
  );
}

/** A new password and its repetition (adding a user, resetting a password). */
export function NewPasswordFields(props: {
  labels: [string, string];
  names?: [string, string];
  autoFocus?: boolean;
  password: string;
  again: string;
  onPassword: (value: string) => void;
  onAgain: (value: string) => void;
}) {
  const { labels, names, autoFocus, password, again, onPassword, onAgain } = props;
  return (
    <>
      <Field label={labels[0]} hint={NEW_PASSWORD_HINT}>
        {(f) => (
          <input
            {...f}
            className={inputClass}
            name={names?.[0]}
            type="password"
            autoFocus={autoFocus}
            autoComplete="new-password"
            required
            minLength={12}
            maxLength={1024}
            value={password}
            onChange={(e) => onPassword(e.target.value)}
          />
        )}
      </Field>
      <Field label={labels[1]}>
        {(f) => (
          <input
            {...f}
            className={inputClass}
            name={names?.[1]}
            type="password"
            autoComplete="new-password"
            required
            value={again}
            onChange={(e) => onAgain(e.target.value)}
          />
        )}
      </Field>
    </>
  );
}

export function RoleSelect({
  value,
  onChange,
  ...rest
}: { value: Role; onChange: (r: Role) => void; disabled?: boolean; name?: string; autoFocus?: boolean } & Partial<FieldProps>) {
  return (
    <select className={inputClass} {...rest} value={value} onChange={(e) => onChange(e.target.value as Role)}>
      {ROLES.map((r) => (
        <option key={r.value} value={r.value}>
          {r.label}
        </option>
      ))}
    </select>
  );
}
