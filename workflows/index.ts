export { deleteDatasets } from './delete-datasets.js';
export { parseDocument } from './parse-document.js';
