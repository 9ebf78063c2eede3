/** Which database the panel runs on; migrations and queries branch on it where the two differ. */
export type Dialect = "sqlite" | "postgres";
