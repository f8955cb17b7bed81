/** Workflow and activity names and workflow-id schemes, in one place. */
export const WORKFLOWS = {
  deleteDatasets: 'deleteDatasets',
  parseDocument: 'parseDocument',
} as const;

/** Workflow ids are derived from the objects they work on, so a second start finds the first run. */
export const workflowIds = {
  deleteDatasets: (key: string) => `delete-datasets-${key}`,
  parseDocument: (documentId: string, runSeq: number) => `parse-document-${documentId}-${runSeq}`,
};
