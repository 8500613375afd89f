import type { DaemonClient } from '@sluice/sdk';
import { SchedulerIndicator } from './scheduler-indicator.js';

// The page's top bar: the workspace shown, the model scheduler's state, and signing out.

export interface HeaderProps {
  client: DaemonClient;
  workspace: string | undefined;
  onWorkspace(workspace: string): void;
}

export function Header({ client, workspace, onWorkspace }: HeaderProps) {
  const submit = (event: Event): void => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const input = form.elements.namedItem('workspace') as HTMLInputElement;
    if (input.value.trim() !== '') onWorkspace(input.value.trim());
  };
  return (
    <header class="top">
      <h1>Sluice</h1>
      <form class="workspace" onSubmit={submit}>
        <label for="workspace">Workspace</label>
        <input id="workspace" name="workspace" value={workspace ?? ''} />
        <button type="submit">Show</button>
      </form>
      <SchedulerIndicator client={client} />
      <form method="post" action="/web/sign-out" class="sign-out">
        <button type="submit">Sign out</button>
      </form>
    </header>
  );
}
