/** The shapes of the knowledge graph, from one model answer to the merged dataset graph. */

/** An entity as one extraction answer gave it. */
export interface RawEntity {
  name: string;
  type: string;
  description: string;
}

/** A relation as one extraction answer gave it (endpoints by entity name). */
export interface RawRelation {
  source: string;
  target: string;
  description: string;
  weight: number;
}

/** What one extraction answer held, and how much of it could not be used. */
export interface Extraction {
  entities: RawEntity[];
  relations: RawRelation[];
  /** Items dropped: no name, an endpoint missing, a relation of an entity to itself, ... */
  skipped: number;
  /** The answer was not one valid JSON object: what could be read was salvaged from it. */
  malformed: boolean;
}

/** One extraction call's result, as stored for the merge: the chunks it read and what it found. */
export interface UnitExtraction {
  /** Position of the unit in the dataset (document order, then chunk order): the merge's order. */
  seq: number;
  chunkIds: string[];
  entities: RawEntity[];
  relations: RawRelation[];
}

/** A node of the merged graph. */
export interface GraphEntity {
  /** Stable: a hash of the dataset-normalised name and type. */
  id: string;
  name: string;
  type: string;
  description: string;
  /** Chunks it was found in (the first MAX_SOURCES). */
  sourceIds: string[];
  /** How many extraction answers named it. */
  mentions: number;
  pagerank: number;
  /** Community number, -1 for none. */
  community: number;
}

/** An edge of the merged graph; undirected (one edge per pair), kept in the direction first seen. */
export interface GraphRelation {
  source: string;
  target: string;
  description: string;
  /** Sum of the weights every answer gave the pair. */
  weight: number;
  sourceIds: string[];
}

export interface Graph {
  entities: GraphEntity[];
  relations: GraphRelation[];
}

/** A community and, once the model summarised it, its report. */
export interface GraphCommunity {
  id: number;
  entityIds: string[];
  /** Distinct chunks its entities come from, relative to the largest community (0..1). */
  weight: number;
  title: string;
  summary: string;
  findings: { summary: string; explanation: string }[];
  rating: number;
}
