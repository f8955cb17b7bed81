/** BlobStore layout: every file of a dataset lives below its prefix, so deleting a dataset is one call. */
export const datasetBlobPrefix = (datasetId: string) => `datasets/${datasetId}`;
export const documentBlobKey = (datasetId: string, documentId: string) => `datasets/${datasetId}/documents/${documentId}`;
export const chunkImageKey = (datasetId: string, imageId: string) => `datasets/${datasetId}/images/${imageId}`;
/** A file uploaded to an agent (`POST /agents/{id}/upload`), below its uploader's tenant. */
export const agentAttachmentKey = (tenantId: string, attachmentId: string) => `agent-attachments/${tenantId}/${attachmentId}`;
