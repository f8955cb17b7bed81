/** The input and result of a schedule's run (workflow `agentScheduledRun`, activity `agentScheduledTurn`). */
export interface ScheduledRunInput {
  agentId: string;
  scheduleId: string;
}

/** The turn a run started, or why it started none. */
export interface ScheduledRunResult {
  sessionId?: string;
  messageId?: string;
  /** The turn could not start (the agent's DSL, its models...): logged with the run. */
  error?: string;
  /** The schedule or its agent is gone: the schedule was deleted. */
  removed?: boolean;
}
