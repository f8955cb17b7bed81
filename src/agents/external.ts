/**
 * RAGFlow components and tools that need a service outside Cairn (a web API with its key, a database, a
 * mail server, a browser, a document renderer). A DSL that uses them imports; running one fails that
 * component (or, as an Agent's tool, answers the model with the error) naming what is missing.
 * PURE: imported by workflow code.
 */
export const EXTERNAL_COMPONENTS: Record<string, string> = {
  TavilySearch: "Tavily's web search API",
  TavilyExtract: "Tavily's extraction API",
  DuckDuckGo: 'the DuckDuckGo web search',
  Google: 'the Google search API (SerpApi)',
  GoogleScholar: 'the Google Scholar search',
  SearXNG: 'a SearXNG server',
  KeenableSearch: 'the Keenable search API',
  QueritSearch: 'the Querit search API',
  QueritContents: 'the Querit contents API',
  BGPT: 'the BGPT API',
  Wikipedia: 'the Wikipedia API',
  ArXiv: 'the arXiv API',
  PubMed: 'the PubMed API',
  GitHub: 'the GitHub API',
  Crawler: 'a web crawler with internet access',
  DeepL: 'the DeepL translation API',
  QWeather: 'the QWeather API',
  Email: 'an SMTP mail server',
  AkShare: 'the AkShare finance data service',
  YahooFinance: 'the Yahoo Finance API',
  WenCai: 'the WenCai finance API',
  Jin10: 'the Jin10 finance API',
  TuShare: 'the TuShare finance API',
  ExeSQL: 'an SQL database server',
  Browser: 'a browser with internet access',
  DocGenerator: 'a document renderer (PDF / DOCX output)',
  ExcelProcessor: 'a spreadsheet processor',
};

export function isExternalComponent(name: unknown): name is string {
  return typeof name === 'string' && Object.hasOwn(EXTERNAL_COMPONENTS, name);
}

/** The run-time error of an external component or tool. */
export function externalComponentError(name: string): string {
  return `${name} needs ${EXTERNAL_COMPONENTS[name]}, an outside service Cairn does not provide; replace it (an Invoke component can call an HTTP API) or remove it`;
}
