/** The tables of alerts and the status page (migration 002_alerts), as Kysely sees them; part of PanelSchema. */
import type { ColumnType, Generated } from "kysely";

type Ms = number;
type Flag = ColumnType<number, number | undefined, number>;

export interface AlertsTable {
  id: Generated<number>;
  rule: string;
  host: string;
  /** '' for alerts about a host as a whole */
  unit: string;
  severity: string;
  summary: string;
  since_at: Ms;
  opened_at: Ms;
  resolved_at: Ms | null;
  /** JSON AlertDiagnosis */
  diagnosis: string | null;
  diagnosis_state: "pending" | "done" | "unavailable" | "none";
  diagnosis_error: string | null;
  silenced: Flag;
  /** its firing notification exists (0 while silenced) */
  fire_queued: Flag;
  /** who said "I'm on it" (migration 009); null until then */
  acknowledged_by: ColumnType<string | null, string | null | undefined, string | null>;
  acknowledged_at: ColumnType<Ms | null, Ms | null | undefined, Ms | null>;
  ack_note: ColumnType<string | null, string | null | undefined, string | null>;
  /** when it was sent to the rule's escalateTo channels (once) */
  escalated_at: ColumnType<Ms | null, Ms | null | undefined, Ms | null>;
  /** opened while a maintenance window covered it: recorded, not sent */
  in_maintenance: Flag;
}

/** A planned maintenance window (migration 009): one-off (starts_at, ends_at) or recurring (cron, duration_minutes, time_zone). */
export interface MaintenanceWindowsTable {
  id: Generated<number>;
  name: string;
  /** JSON list of host:unit patterns */
  units: string;
  starts_at: Ms | null;
  ends_at: Ms | null;
  cron: string | null;
  duration_minutes: number | null;
  time_zone: string | null;
  exclude_uptime: Flag;
  created_by: string;
  created_at: Ms;
  ended_at: Ms | null;
  ended_by: string | null;
}

/** An alert's start or end, waiting to be grouped into a message (message_id null until then). */
export interface AlertNotificationsTable {
  id: Generated<number>;
  alert_id: number;
  state: "firing" | "resolved";
  created_at: Ms;
  message_id: number | null;
}

export interface AlertMessagesTable {
  id: Generated<number>;
  kind: "alert" | "test";
  host: string | null;
  rule: string | null;
  state: string;
  title: string;
  /** JSON AlertWebhookPayload */
  payload: string;
  created_at: Ms;
}

/** One message for one channel: claimed by one replica at a time (lease_until), retried with backoff. */
export interface AlertOutboxTable {
  id: Generated<number>;
  message_id: number;
  channel_id: string;
  status: "pending" | "sent" | "failed";
  attempts: ColumnType<number, number | undefined, number>;
  created_at: Ms;
  next_attempt_at: Ms;
  lease_until: Ms | null;
  last_attempt_at: Ms | null;
  sent_at: Ms | null;
  last_error: string | null;
}

export interface AlertChannelsTable {
  id: string;
  type: "webhook" | "slack" | "ntfy" | "email";
  name: string;
  /** JSON: shown to admins */
  config: string;
  /** JSON: never shown back; sealed (../secretBox.ts, context alert_channels.secret/<id>) */
  secret: string;
  enabled: Flag;
  created_at: Ms;
  created_by: string | null;
  updated_at: Ms;
}

export interface AlertSilencesTable {
  id: Generated<number>;
  host_pattern: string;
  unit_pattern: string | null;
  rule: string | null;
  reason: string;
  created_by: string;
  created_at: Ms;
  ends_at: Ms;
  ended_at: Ms | null;
  ended_by: string | null;
}

/** One row (id 1). */
export interface StatusPageTable {
  id: number;
  enabled: Flag;
  public: Flag;
  show_hosts: Flag;
  /** sha256 of the link's token, hex */
  token_hash: string | null;
  token_hint: string | null;
  /** JSON StatusGroup[] */
  groups: ColumnType<string, string | undefined, string>;
  updated_at: Ms | null;
  updated_by: string | null;
}

export interface AlertTables {
  alerts: AlertsTable;
  alert_notifications: AlertNotificationsTable;
  alert_messages: AlertMessagesTable;
  alert_outbox: AlertOutboxTable;
  alert_channels: AlertChannelsTable;
  alert_silences: AlertSilencesTable;
  status_page: StatusPageTable;
  maintenance_windows: MaintenanceWindowsTable;
}
