import type { AddressObject } from 'mailparser';
import { CorruptFileError, ParseLimitError, UnsupportedFormatError } from '../errors.js';
import type { Extractor } from '../extractor.js';
import { extensionForContentType, isSupportedFile } from '../formats.js';
import { htmlSections } from '../html.js';
import { loadMailparser } from '../libraries.js';
import { splitParagraphs } from '../text.js';
import type { Section } from '../types.js';

const addresses = (field: AddressObject | AddressObject[] | undefined): string =>
  (Array.isArray(field) ? field : field ? [field] : []).map((a) => a.text).join(', ');

/**
 * Headers go to meta, the body (plain text, else HTML) becomes sections, and each attachment is parsed
 * with the full dispatcher and appended after a title naming it. Attachments that cannot be parsed are
 * listed in meta.skipped_attachments rather than failing the email; one over a parsing limit fails it.
 */
export const extractEml: Extractor = async (bytes, ctx) => {
  const { simpleParser } = await loadMailparser();
  const mail = await simpleParser(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length), {
    skipHtmlToText: false,
    skipTextToHtml: true,
    skipTextLinks: true,
    skipImageLinks: true,
  });
  if (mail.headers.size === 0) throw new Error('no email headers found');

  const meta: Record<string, string> = {};
  const headers: [string, string | undefined][] = [
    ['from', addresses(mail.from)],
    ['to', addresses(mail.to)],
    ['cc', addresses(mail.cc)],
    ['subject', mail.subject],
    ['date', mail.date?.toISOString()],
  ];
  for (const [key, value] of headers) if (value) meta[key] = value;

  const sections: Section[] = mail.text?.trim()
    ? splitParagraphs(mail.text).map((text) => ({ kind: 'text', text }))
    : mail.html
      ? htmlSections(mail.html).sections
      : [];

  const attached: string[] = [];
  const skipped: string[] = [];
  for (const [i, attachment] of mail.attachments.entries()) {
    // Inline parts referenced by the HTML body (logos, signatures) are decoration, not content.
    if (attachment.related) continue;
    ctx.signal?.throwIfAborted();
    const name = attachment.filename || `attachment-${i + 1}${extensionForContentType(attachment.contentType) ?? ''}`;
    if (!isSupportedFile(name)) {
      skipped.push(`${name} (unsupported file type)`);
      continue;
    }
    try {
      const doc = await ctx.extractEmbedded(attachment.content, name);
      // Positions point into the attachment, not into this email.
      sections.push({ kind: 'title', text: `Attachment: ${name}`, level: 1 }, ...doc.sections.map(({ positions: _, ...s }) => s));
      attached.push(name);
    } catch (error) {
      // A hostile attachment fails the whole email: skipping it would hide why the email's content is short.
      if (error instanceof ParseLimitError) throw new ParseLimitError(ctx.filename, `has an attachment over a parsing limit: ${error.message}`);
      if (!(error instanceof CorruptFileError || error instanceof UnsupportedFormatError)) throw error;
      skipped.push(`${name} (${error.message})`);
    }
  }
  if (attached.length > 0) meta.attachments = attached.join(', ');
  if (skipped.length > 0) meta.skipped_attachments = skipped.join('; ');
  return { sections, pages: 1, meta };
};
