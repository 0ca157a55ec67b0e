// The authoring guide beside the feature editor: the application's tables with their generated
// operations and a list-and-add page for each (one click puts it in the editor), the @trellis/ui
// components with their props, the @trellis/runtime exports and the rules. Everything comes from
// the builder GraphQL's featureAuthoringGuide, the guide agents read over MCP. Beside the editor on
// a wide screen, a drawer over it on a narrow one.
import { useEffect, useId, useRef, useState } from 'react';
import type { FeatureGuideQuery } from '../graphql-operations.js';
import type { AuthoringAssist, GuideComponent, GuideRuntimeExport, GuideTable } from './code-assist.js';
import { SelectField } from './components.js';

/** The guide as the panel and the completions use it. */
export interface FeatureGuideData extends AuthoringAssist {
  runtimeRules: string[];
  tables: (GuideTable & { example: string })[];
}

export const FEATURE_GUIDE_QUERY = `query FeatureGuide { featureAuthoringGuide {
  components { name description element props { name type description } }
  runtime { name signature description }
  runtimeRules
  tables { example table { name fields { name type required } operations { type input list get create update delete } } }
} }`;

/**
 * The answer of FEATURE_GUIDE_QUERY with each table's example beside its fields and operations. The
 * guide lists only tables that have generated operations; `operations` is nullable in the schema
 * (AppTable's, for a table without them), so a table without is left out here too.
 */
export function guideFrom(answer: FeatureGuideQuery): FeatureGuideData {
  const { tables, ...guide } = answer.featureAuthoringGuide;
  return { ...guide, tables: tables.flatMap(({ example, table: { operations, ...table } }) => (operations ? [{ ...table, operations, example }] : [])) };
}

/** Below this width the guide is a drawer over the editor (designer.css says the same). */
export const GUIDE_DRAWER_QUERY = '(max-width: 1100px)';

/** Whether the guide is a drawer now, following the window's width. */
export function useGuideIsDrawer(): boolean {
  const [drawer, setDrawer] = useState(() => matchMedia(GUIDE_DRAWER_QUERY).matches);
  useEffect(() => {
    const media = matchMedia(GUIDE_DRAWER_QUERY);
    const update = () => setDrawer(media.matches);
    media.addEventListener('change', update);
    return () => media.removeEventListener('change', update);
  }, []);
  return drawer;
}

export function FeatureGuide({
  id,
  guide,
  error,
  drawer,
  onInsert,
  onClose,
}: {
  id: string;
  guide: FeatureGuideData | undefined;
  error: string | null;
  drawer: boolean;
  onInsert: (code: string, table: string) => void;
  onClose: () => void;
}) {
  const titleId = useId();
  const title = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (!drawer) return;
    title.current?.focus();
    const onKey = (event: KeyboardEvent) => event.key === 'Escape' && onClose();
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [drawer, onClose]);
  return (
    <aside id={id} className="guide-panel" aria-labelledby={titleId} role={drawer ? 'dialog' : undefined} aria-modal={drawer ? true : undefined}>
      <div className="guide-head">
        <h3 id={titleId} ref={title} tabIndex={-1}>
          Authoring guide
        </h3>
        <button type="button" onClick={onClose} aria-label="Close the guide">
          Close
        </button>
      </div>
      {error ? <p className="error">{error}</p> : null}
      {guide ? (
        <>
          <GuideTables tables={guide.tables} onInsert={onInsert} />
          <details className="guide-group">
            <summary>Components from @trellis/ui</summary>
            {guide.components.map((component) => (
              <ComponentEntry key={component.name} component={component} />
            ))}
          </details>
          <details className="guide-group">
            <summary>Runtime from @trellis/runtime</summary>
            <ul className="guide-list">
              {guide.runtime.map((entry) => (
                <RuntimeEntry key={entry.name} entry={entry} />
              ))}
            </ul>
          </details>
          <details className="guide-group">
            <summary>Rules the validator checks</summary>
            <ul className="guide-list">
              {guide.runtimeRules.map((rule) => (
                <li key={rule}>{rule}</li>
              ))}
            </ul>
          </details>
        </>
      ) : error ? null : (
        <p className="muted">Loading the guide…</p>
      )}
    </aside>
  );
}

function GuideTables({ tables, onInsert }: { tables: FeatureGuideData['tables']; onInsert: (code: string, table: string) => void }) {
  const [chosen, setChosen] = useState(tables[0]?.name ?? '');
  const table = tables.find((entry) => entry.name === chosen) ?? tables[0];
  if (!table) {
    return (
      <section className="guide-group" aria-label="Your tables">
        <h4>Your tables</h4>
        <p className="muted">No table yet: create one under Tables, and its operations and a page for it appear here.</p>
      </section>
    );
  }
  const op = table.operations;
  return (
    <section className="guide-group" aria-label="Your tables">
      <h4>Your tables</h4>
      {tables.length > 1 ? <SelectField label="Table" value={table.name} onChange={setChosen} options={tables.map((entry) => ({ value: entry.name, label: entry.name }))} /> : null}
      <p className="guide-note">
        The operations of <strong>{table.name}</strong> in the page's GraphQL:
      </p>
      <ul className="guide-list guide-code" aria-label={`Operations of ${table.name}`}>
        <li>
          <code>{op.list}(filter, sort, limit, offset) {'{ items { … } total }'}</code>
        </li>
        <li>
          <code>{op.get}(Id: ID!)</code>
        </li>
        <li>
          <code>
            {op.create}(data: {op.input}!)
          </code>
        </li>
        <li>
          <code>
            {op.update}(Id: ID!, data: {op.input}!)
          </code>
        </li>
        <li>
          <code>{op.delete}(Id: ID!)</code>
        </li>
      </ul>
      <p className="guide-note">Fields:</p>
      <ul className="guide-list guide-code" aria-label={`Fields of ${table.name}`}>
        {table.fields.map((field) => (
          <li key={field.name}>
            <code>{field.name}</code> {field.type}
            {field.required ? ', required' : ''}
          </li>
        ))}
      </ul>
      <button type="button" className="primary" onClick={() => onInsert(table.example, table.name)}>
        Insert a page for {table.name}
      </button>
      <p className="guide-note muted">It lists the records and adds one; it replaces the code in the editor (Ctrl+Z undoes it).</p>
      <details>
        <summary>Show that page's code</summary>
        {/* It scrolls: the keyboard reaches it to scroll it too. */}
        <pre className="guide-example" tabIndex={0} role="region" aria-label={`Code of the page for ${table.name}`}>
          <code>{table.example}</code>
        </pre>
      </details>
    </section>
  );
}

function ComponentEntry({ component }: { component: GuideComponent }) {
  return (
    <details className="guide-entry">
      <summary>
        <code>{`<${component.name}>`}</code> {component.description}
      </summary>
      <ul className="guide-list">
        {component.props.map((prop) => (
          <li key={prop.name}>
            <code>{prop.name}</code>: <code>{prop.type}</code> {prop.description}
          </li>
        ))}
      </ul>
      {component.element ? <p className="guide-note muted">Also the attributes of &lt;{component.element}&gt;: className, style, id, aria-*, event handlers (which receive the browser's event).</p> : null}
    </details>
  );
}

function RuntimeEntry({ entry }: { entry: GuideRuntimeExport }) {
  return (
    <li>
      <code>{entry.signature}</code>
      <br />
      {entry.description}
    </li>
  );
}
