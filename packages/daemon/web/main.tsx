import { render } from 'preact';
import { App } from './app.js';

// The web client's entry: draws the app into the page's #app.
const root = document.getElementById('app')!;
root.replaceChildren();
render(<App />, root);
