// The choices of the Runs view's next-agent field: for a team run, the
// team's agents as it is now (the team panel's, else the run's starting
// team), with an agent chosen earlier who has since left kept so the field
// still shows it; none for a run without a team (free text, with the run's
// known agents as suggestions).

/** The names to offer in a select, or null for free text. */
export function nextAgentChoices(team: readonly string[] | null | undefined, chosen: string | null | undefined): string[] | null {
  if (!team || team.length === 0) return null;
  const names = [...new Set(team)];
  if (chosen && !names.includes(chosen)) names.push(chosen);
  return names;
}
