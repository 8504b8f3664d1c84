import 'uplot/dist/uPlot.min.css';
import './style.css';
import './approvals.css';
import './changes.css';
import './trace.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { CostsPage } from './costs-page.js';
import { SearchPage } from './search-page.js';
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
  // #/session/:id, #/session/:id/span/:span (a deep link), #/session/:id/record/:n (a search hit),
  // #/session/:id/conversation.
  const match = /^\/session\/([^/]+)(?:\/(span|record)\/([^/]+)|\/(conversation))?$/.exec(route);
  const session = match?.[1];
  const record = match?.[2] === 'record' ? Number(match[3]) : undefined;
  const page =
    session !== undefined ? (
      <SessionPage
        id={decodeURIComponent(session)}
        key={session}
        view={match?.[4] === 'conversation' ? 'conversation' : 'trace'}
        span={match?.[2] === 'span' ? decodeURIComponent(match[3]!) : undefined}
        record={record !== undefined && Number.isInteger(record) ? record : undefined}
      />
    ) : route.startsWith('/search') ? (
      <SearchPage query={new URLSearchParams(route.split('?')[1] ?? '').get('q') ?? ''} />
    ) : route === '/costs' ? (
      <CostsPage />
    ) : route === '/tools' ? (
      <ToolsPage />
    ) : (
      <SessionsPage />
    );
  const current = session !== undefined ? '/' : route.startsWith('/search') ? '/search' : route;
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
            ['/search', 'Search'],
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
