/**
 * RAGFlow components and tools that need a service outside Cairn (a web API with its key, a database, a
 * mail server, a browser, a document renderer). A DSL that uses them imports; running one fails that
 * component (or, as an Agent's tool, answers the model with the error) naming what is missing and, where
 * Cairn has one, the local equivalent to use instead. docs/agents.md lists this table (a unit test keeps
 * the two in step).
 * PURE: imported by workflow code.
 */

export interface ExternalService {
  /** What the component needs that Cairn does not provide. */
  needs: string;
  /** What to use in Cairn instead; absent when nothing local does the same job. */
  instead?: string;
}

/** Searching the web or a public knowledge base: the local counterpart is a search of your own datasets. */
const SEARCH = 'a Retrieval tool over your datasets';
/** Fetching a page or calling a plain HTTP API: Invoke makes the request (behind Cairn's URL guard). */
const HTTP = 'an Invoke component (an HTTP request to a URL Cairn may reach)';
/** Searching papers: upload them to a dataset and search it. */
const PAPERS = 'a Retrieval tool over a dataset of the papers';

export const EXTERNAL_COMPONENTS: Record<string, ExternalService> = {
  // Web and knowledge search.
  TavilySearch: { needs: "Tavily's web search API", instead: SEARCH },
  DuckDuckGo: { needs: 'the DuckDuckGo web search', instead: SEARCH },
  Google: { needs: 'the Google search API (SerpApi)', instead: SEARCH },
  // Not a RAGFlow tool class, but RAGFlow's web_search_assistant template offers it.
  Bing: { needs: 'the Bing web search API', instead: SEARCH },
  SearXNG: { needs: 'a SearXNG server', instead: SEARCH },
  KeenableSearch: { needs: 'the Keenable search API', instead: SEARCH },
  QueritSearch: { needs: 'the Querit search API', instead: SEARCH },
  Wikipedia: { needs: 'the Wikipedia API', instead: SEARCH },
  // Papers.
  GoogleScholar: { needs: 'the Google Scholar search', instead: PAPERS },
  ArXiv: { needs: 'the arXiv API', instead: PAPERS },
  PubMed: { needs: 'the PubMed API', instead: PAPERS },
  BGPT: { needs: 'the BGPT API', instead: PAPERS },
  // Reading web pages.
  TavilyExtract: { needs: "Tavily's extraction API", instead: HTTP },
  QueritContents: { needs: 'the Querit contents API', instead: HTTP },
  Crawler: { needs: 'a web crawler with internet access', instead: HTTP },
  Browser: { needs: 'a browser with internet access', instead: HTTP },
  // Plain HTTP APIs, which Invoke can call with your own key.
  GitHub: { needs: 'the GitHub API', instead: HTTP },
  QWeather: { needs: 'the QWeather API', instead: HTTP },
  YahooFinance: { needs: 'the Yahoo Finance API', instead: HTTP },
  TuShare: { needs: 'the TuShare finance API', instead: HTTP },
  WenCai: { needs: 'the WenCai finance API', instead: HTTP },
  Jin10: { needs: 'the Jin10 finance API', instead: HTTP },
  // A Python library that scrapes finance sites: no HTTP API for Invoke, no network in the sandbox.
  AkShare: { needs: 'the AkShare finance data service' },
  // Translation is what a chat model does.
  DeepL: { needs: 'the DeepL translation API', instead: 'an LLM component (your chat model translates)' },
  // CodeExec's sandbox has no network, so it cannot reach a database either.
  ExeSQL: { needs: 'an SQL database server' },
  Email: { needs: 'an SMTP mail server' },
  // The sandbox has no files: neither can be done in CodeExec.
  DocGenerator: { needs: 'a document renderer (PDF / DOCX output)' },
  ExcelProcessor: { needs: 'a spreadsheet processor' },
};

export function isExternalComponent(name: unknown): name is string {
  return typeof name === 'string' && Object.hasOwn(EXTERNAL_COMPONENTS, name);
}

/** The run-time error of an external component or tool: what is missing, and what to use instead. */
export function externalComponentError(name: string): string {
  const { needs, instead } = EXTERNAL_COMPONENTS[name]!;
  const advice = instead ? `use ${instead} instead` : 'Cairn has nothing local that does this: remove it';
  return `${name} needs ${needs}, an outside service Cairn does not provide; ${advice}`;
}
