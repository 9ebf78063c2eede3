/** Audit action names of the alerts and status page procedures (the audit log's `action` column). */
export const ALERT_AUDIT_ACTIONS = {
  channelAdd: "alert.channel.add",
  channelUpdate: "alert.channel.update",
  channelRemove: "alert.channel.remove",
  channelTest: "alert.channel.test",
  silenceAdd: "alert.silence.add",
  silenceRemove: "alert.silence.remove",
  statusPageUpdate: "status-page.update",
  statusPageRotateToken: "status-page.rotate-token",
  alertAck: "alert.ack",
  maintenanceCreate: "maintenance.create",
  maintenanceEnd: "maintenance.end",
} as const;

/** Procedure path → audit action, for the endpoint's refusal records. */
export const ALERT_PROCEDURE_AUDIT_ACTIONS: Readonly<Record<string, string>> = {
  "alerts.channels.add": ALERT_AUDIT_ACTIONS.channelAdd,
  "alerts.channels.update": ALERT_AUDIT_ACTIONS.channelUpdate,
  "alerts.channels.remove": ALERT_AUDIT_ACTIONS.channelRemove,
  "alerts.channels.test": ALERT_AUDIT_ACTIONS.channelTest,
  "alerts.silences.add": ALERT_AUDIT_ACTIONS.silenceAdd,
  "alerts.silences.remove": ALERT_AUDIT_ACTIONS.silenceRemove,
  "statusPage.update": ALERT_AUDIT_ACTIONS.statusPageUpdate,
  "statusPage.rotateToken": ALERT_AUDIT_ACTIONS.statusPageRotateToken,
  "alerts.ack": ALERT_AUDIT_ACTIONS.alertAck,
  "maintenance.create": ALERT_AUDIT_ACTIONS.maintenanceCreate,
  "maintenance.end": ALERT_AUDIT_ACTIONS.maintenanceEnd,
};
