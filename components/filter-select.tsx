/** A labelled `<select>` of a GET filter form (history, reports): the value comes back in the URL. */
export function FilterSelect(props: {
  label: string;
  name: string;
  value: string;
  /** `[value, label]` pairs, in order. */
  options: readonly (readonly [string, string])[];
  testId?: string;
}) {
  return (
    <label className="space-y-1 text-sm">
      <span className="block text-xs text-zinc-500">{props.label}</span>
      <select data-testid={props.testId} name={props.name} defaultValue={props.value} className="field w-auto py-1.5">
        {props.options.map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
    </label>
  );
}

/** A labelled date `<input>` of a GET filter form (history, reports, audit log). */
export function FilterDate(props: { label: string; name: string; value: string | undefined; testId?: string }) {
  return (
    <label className="space-y-1 text-sm">
      <span className="block text-xs text-zinc-500">{props.label}</span>
      <input
        data-testid={props.testId}
        type="date"
        name={props.name}
        defaultValue={props.value}
        className="field py-1.5"
      />
    </label>
  );
}
