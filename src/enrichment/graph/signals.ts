/** The signal that asks a running graph job for one more pass when it is done (a parse finished meanwhile). */
export const GRAPH_RERUN_SIGNAL = 'graphRerun';
