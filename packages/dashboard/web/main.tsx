import 'uplot/dist/uPlot.min.css';
import './style.css';
import './approvals.css';
import './changes.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { CostsPage } from './costs-page.js';
import { SessionPage } from './session-page.js';
import { SessionsPage } from './sessions-page.js';
import { ToolsPage } from './tools-page.js';

function useRoute(): string {
  const [route, setRoute] = useState(location.hash.slice(1) || '/');
  useEffect(() => {
    const onChange = () => setRoute(location.hash.slice(1) || '/');
    addEventListener('hashchange', onChange);
    // Effects run after the first paint: a hash changed in between (a link followed, or a URL
    // opened, as soon as the page loaded) fired no event this listener saw, so catch up now.
    onChange();
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

function App() {
  const route = useRoute();
  const session = /^\/session\/([^/]+)$/.exec(route)?.[1];
  const page =
    session !== undefined ? (
      <SessionPage id={decodeURIComponent(session)} key={session} />
    ) : route === '/costs' ? (
      <CostsPage />
    ) : route === '/tools' ? (
      <ToolsPage />
    ) : (
      <SessionsPage />
    );
  const current = session !== undefined ? '/' : route;
  return (
    <>
      <header class="top">
        <a class="brand" href="#/">
          rho
        </a>
        <nav>
          {[
            ['/', 'Sessions'],
            ['/costs', 'Costs'],
            ['/tools', 'Tools'],
          ].map(([path, label]) => (
            <a href={`#${path}`} class={current === path ? 'active' : ''} key={path}>
              {label}
            </a>
          ))}
        </nav>
      </header>
      <main>{page}</main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
