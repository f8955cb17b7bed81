/**
 * Signal to a running `raptorIndex` workflow: the dataset's parsed chunks changed (a document finished
 * parsing with RAPTOR on), so the workflow builds the trees once more when its current pass ends. Pure:
 * imported by the workflow code and by the code that signals it.
 */
export const RAPTOR_SOURCES_CHANGED = 'raptorSourcesChanged';
