/** The panels that open under a user's row, one at a time, and what each is given. */
import type { PanelUser } from "@/server/contract/users";

export type Panel = "edit" | "password" | "disable";

export type PanelProps = { user: PanelUser; onDone: (message: string) => void; onCancel: () => void };
