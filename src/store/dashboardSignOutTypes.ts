/**
 * Dashboard sign-outs (`dashboard_sign_outs`, migration 20): the dashboard's session lives in a sealed
 * cookie, so a sign-out is remembered here, shared by every replica, until the session would have ended:
 * a copy of the cookie taken before opens nothing, whether or not Discord revoked its token.
 */
export interface DashboardSignOutStore {
  /** The session (by the hash of its id) is signed out until `until`; rows already past are pruned. */
  recordDashboardSignOut(sessionHash: string, until: number, now: number): Promise<void>;
  /** Whether the session was signed out (and would not have ended yet). */
  isDashboardSignedOut(sessionHash: string, now: number): Promise<boolean>;
}
