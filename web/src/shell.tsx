/** The signed-in console: header, the panel list, and the live flow's stream (kept open whichever panel is shown). */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Whoami } from './api';
import { useLiveFlow, type FlowQuery } from './useLiveFlow';
import { AgentsPanel } from './panels/agents';
import { ChartsPanel } from './panels/charts';
import { HealthPanel } from './panels/health';
import { LiveFlowPanel } from './panels/liveFlow';
import { RejectionsPanel } from './panels/rejections';
import { StoryPanel } from './panels/story';

type PanelId = 'flow' | 'agents' | 'story' | 'rejections' | 'health' | 'charts';
const PANELS: Array<{ id: PanelId; label: string }> = [
  { id: 'flow', label: 'Live flow' },
  { id: 'agents', label: 'Agents' },
  { id: 'story', label: 'Message story' },
  { id: 'rejections', label: 'Rejections' },
  { id: 'health', label: 'Health' },
  { id: 'charts', label: 'Charts' },
];

export function Shell({ who, onSignOut }: { who: Whoami; onSignOut: () => void }) {
  const [panel, setPanel] = useState<PanelId>('flow');
  const [storyId, setStoryId] = useState('');
  const [query, setQuery] = useState<FlowQuery>({});
  const flow = useLiveFlow(query);
  const isAdmin = who.role === 'admin';
  const main = useRef<HTMLElement>(null);
  useEffect(() => {
    document.title = `${PANELS.find((p) => p.id === panel)!.label} · agent-mailbox console`;
    // A panel opened from inside another (a flow row's story link, a story's thread) took away the element that had
    // the focus: it fell to the page's body, and the next Tab started over at "Sign out". It goes to the new panel's
    // heading instead, so the next Tab goes into the panel (a panel list button keeps its focus: it is still there).
    const active = document.activeElement;
    if (active !== null && active !== document.body) return;
    const heading = main.current?.querySelector('h2');
    if (!heading) return;
    heading.tabIndex = -1;
    heading.focus();
  }, [panel]);
  const openStory = (messageId: string) => {
    setStoryId(messageId);
    setPanel('story');
  };
  const showThread = (threadId: string) => {
    setQuery({ ...query, threadId });
    setPanel('flow');
  };
  return (
    <div class="shell">
      <header>
        <h1>agent-mailbox console</h1>
        <span class="who" data-testid="who">
          {who.role === 'admin' ? 'admin' : `auditor ${who.identity}`} {isAdmin ? '' : '(read only)'}
        </span>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <nav aria-label="Panels">
        <ul>
          {PANELS.map((p) => (
            <li key={p.id}>
              <button type="button" aria-current={panel === p.id ? 'page' : undefined} onClick={() => setPanel(p.id)}>
                {p.label}
              </button>
            </li>
          ))}
        </ul>
      </nav>
      <main ref={main}>
        {panel === 'flow' && <LiveFlowPanel flow={flow} query={query} onQuery={setQuery} onOpenStory={openStory} />}
        {panel === 'agents' && <AgentsPanel isAdmin={isAdmin} />}
        {panel === 'story' && <StoryPanel messageId={storyId} onMessageId={setStoryId} onShowThread={showThread} />}
        {panel === 'rejections' && <RejectionsPanel />}
        {panel === 'health' && <HealthPanel onOpenStory={openStory} />}
        {panel === 'charts' && <ChartsPanel />}
      </main>
    </div>
  );
}
