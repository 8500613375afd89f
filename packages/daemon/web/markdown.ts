import DOMPurify from 'dompurify';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { Marked } from 'marked';

// Model output as HTML a person can read, and never as code the page runs: markdown by `marked`
// with raw HTML turned into text, code blocks highlighted by highlight.js (a few common
// languages, to keep the bundle small), and the result passed through DOMPurify (no scripts,
// event handlers, styles, forms or javascript: URLs) before it reaches the DOM.

for (const [name, language] of Object.entries({
  bash,
  css,
  diff,
  go,
  javascript,
  json,
  python,
  rust,
  typescript,
  xml,
  yaml,
}))
  hljs.registerLanguage(name, language);
hljs.registerAliases(['sh', 'shell', 'zsh'], { languageName: 'bash' });
hljs.registerAliases(['js', 'jsx', 'mjs'], { languageName: 'javascript' });
hljs.registerAliases(['ts', 'tsx'], { languageName: 'typescript' });
hljs.registerAliases(['py'], { languageName: 'python' });
hljs.registerAliases(['html', 'svg'], { languageName: 'xml' });
hljs.registerAliases(['yml'], { languageName: 'yaml' });

const escape = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const marked = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    // Raw HTML in the model's answer is shown as text, never parsed.
    html: ({ text }) => escape(text),
    code: ({ text, lang }) => {
      const language = lang?.split(/\s/, 1)[0];
      const known = language !== undefined && hljs.getLanguage(language) !== undefined;
      const body = known ? hljs.highlight(text, { language, ignoreIllegals: true }).value : escape(text);
      return `<pre><code class="hljs${known ? ` language-${escape(language)}` : ''}">${body}</code></pre>`;
    },
  },
});

// Set once: a configuration passed to each `sanitize` call is parsed again on every call. In
// place: DOMPurify otherwise parses a string into a new document per call, which was half of the
// markdown time while a long session streamed in (measured: docs/decisions/040-web-client.md).
DOMPurify.setConfig({
  USE_PROFILES: { html: true },
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed'],
  FORBID_ATTR: ['style'],
  IN_PLACE: true,
});

/** A document with no browsing context: markup parsed in it runs no script and loads nothing. */
const inert = document.implementation.createHTMLDocument('');

/** Sanitised HTML of `markdown`: safe to assign to `innerHTML`. */
export function renderMarkdown(markdown: string): string {
  const holder = inert.createElement('div');
  holder.innerHTML = marked.parse(markdown, { async: false });
  DOMPurify.sanitize(holder);
  return holder.innerHTML;
}

// Links in model output open in a new tab and tell the target nothing of the page.
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});
