/** Workflow and activity names and workflow-id schemes, in one place. */
export const WORKFLOWS = {
  deleteDatasets: 'deleteDatasets',
  parseDocument: 'parseDocument',
  agentRun: 'agentRun',
  memoryExtraction: 'memoryExtraction',
} as const;

/** Agent runs poll their own queue, so a long parse never delays a chat turn. */
export function agentTaskQueue(taskQueue: string): string {
  return `${taskQueue}-agents`;
}

/** Workflow ids are derived from the objects they work on, so a second start finds the first run. */
export const workflowIds = {
  deleteDatasets: (key: string) => `delete-datasets-${key}`,
  parseDocument: (documentId: string, runSeq: number) => `parse-document-${documentId}-${runSeq}`,
  /** One id per session: Temporal itself refuses a second run of a session while one is open. */
  agentRun: (agentId: string, sessionId: string) => `agent-${agentId}-session-${sessionId}`,
  /** One id per raw memory message (message ids are never reused). */
  memoryExtraction: (memoryId: string, messageId: number) => `memory-${memoryId}-message-${messageId}`,
};
