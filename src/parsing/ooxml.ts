import { DOMParser } from '@xmldom/xmldom';
import type JSZip from 'jszip';

/** Parses an XML part; malformed XML throws instead of being silently repaired. */
export function parseXml(xml: string, part: string): Document {
  const fail = (message: string): never => {
    throw new Error(`${part} is malformed XML (${message.trim()})`);
  };
  return new DOMParser({ errorHandler: { warning: () => {}, error: fail, fatalError: fail } }).parseFromString(xml, 'text/xml');
}

/** Reads a part of an Office package as XML, or undefined when the package lacks it. */
export async function xmlPart(zip: JSZip, part: string): Promise<Document | undefined> {
  const xml = await zip.file(part)?.async('string');
  return xml === undefined ? undefined : parseXml(xml, part);
}

/** Title and author from docProps/core.xml (absent fields are left out). */
export async function corePropsOf(zip: JSZip): Promise<Record<string, string>> {
  const core = await xmlPart(zip, 'docProps/core.xml');
  const meta: Record<string, string> = {};
  const field = (tag: string): string => core?.getElementsByTagName(tag)[0]?.textContent?.trim() ?? '';
  if (field('dc:title')) meta.title = field('dc:title');
  if (field('dc:creator')) meta.author = field('dc:creator');
  return meta;
}
