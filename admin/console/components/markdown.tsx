/**
 * Markdown as a person reads it: `marked` to HTML, then DOMPurify, because message text is whatever
 * a client or a model sent and must never run as script in the console.
 */
import DOMPurify from 'dompurify';
import { marked } from 'marked';
import { useMemo } from 'react';

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

/** Renders `text` as sanitized markdown (GitHub flavour, line breaks kept). */
export function Markdown({ text }: { text: string }) {
  const html = useMemo(() => {
    if (text.length > MAX_MARKDOWN_CHARS) return null;
    const raw = marked.parse(text, { async: false, gfm: true, breaks: true }) as string;
    return DOMPurify.sanitize(raw, { USE_PROFILES: { html: true } });
  }, [text]);
  if (html === null) return <pre className="plain">{text}</pre>;
  return <div className="markdown" dangerouslySetInnerHTML={{ __html: html }} />;
}
