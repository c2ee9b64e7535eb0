/** The console's entry: mounts {@link App} into `#root` (index.html, written by scripts/build.ts). */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app.tsx';
import './styles.css';
import { applyTheme, currentTheme } from './theme.ts';

applyTheme(currentTheme());

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
