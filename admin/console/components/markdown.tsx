/**
 * Markdown as a person reads it: `marked` to HTML, then DOMPurify, because message text is whatever
 * a client or a model sent and must never run as script in the console. HTML in the text is shown
 * as the text it is, not rendered: prompts are full of XML-style tags (`<instructions>`, Claude
 * Code's `<system-reminder>`) and comparisons (`a<b`) that a browser would swallow or misread.
 */
import DOMPurify from 'dompurify';
import { Marked, type Tokens } from 'marked';
import { useMemo } from 'react';

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** `text` as HTML that shows it verbatim. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/**
 * What marked would pass through as HTML, written out as text instead: an inline tag in place, a
 * block of HTML as a paragraph keeping its line breaks and indentation (class `as-sent`).
 */
function htmlAsText({ text, block }: Tokens.HTML | Tokens.Tag): string {
  return block ? `<p class="as-sent">${escapeHtml(text.replace(/\n+$/, ''))}</p>\n` : escapeHtml(text);
}

/** GitHub-flavoured markdown with line breaks kept, and no raw HTML. */
const markdown = new Marked({ gfm: true, breaks: true, renderer: { html: htmlAsText } });

// A link in a message opens in a new tab: following it must not leave the console, nor tell the
// linked site where it came from.
// An image from another site in logged text is not fetched: opening a log must not tell that
// site (a tracking pixel in a prompt) who reads it. Its address is shown instead.
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.getAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
  const src = node.tagName === 'IMG' ? node.getAttribute('src') : null;
  if (src && !src.startsWith('data:')) {
    node.removeAttribute('src');
    node.setAttribute('alt', `[image not loaded: ${src}]`);
  }
});

/** Texts longer than this render as plain text: parsing megabytes of markdown would stall the page. */
const MAX_MARKDOWN_CHARS = 200_000;

/** Renders `text` as sanitized markdown (GitHub flavour, line breaks kept, HTML shown as text). */
export function Markdown({ text }: { text: string }) {
  const html = useMemo(() => {
    if (text.length > MAX_MARKDOWN_CHARS) return null;
    const raw = markdown.parse(text, { async: false });
    return DOMPurify.sanitize(raw, { USE_PROFILES: { html: true } });
  }, [text]);
  if (html === null) return <pre className="plain">{text}</pre>;
  return <div className="markdown" dangerouslySetInnerHTML={{ __html: html }} />;
}
