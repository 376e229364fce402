// helpers.mjs: what the timeline's browser tests (defects.mjs, views.mjs) share: the
// environment, a check that throws, the profile's API base, a SQL query through _search
// and waiting for a profile page's timeline to have the data of its view.
export const env = (k) => { if (!process.env[k]) throw new Error(`${k} not set`); return process.env[k]; };
export const check = (cond, msg) => { if (!cond) throw new Error(msg); };
export const apiOf = (url, name) => `${url}/api/v1/profiles/namespace/global/profile_name/${encodeURIComponent(name)}`;

/* The rows of a SELECT on profile `name`, as the server sends them. */
export async function sqlRows(page, url, name, q) {
  const r = await page.request.post(`${url}/api/v1/db/${encodeURIComponent(name)}/_search`,
    { data: { type: 'databaseExplorerQuery', query: q } });
  const j = await r.json();
  check(r.ok(), `SQL ${q}: ${JSON.stringify(j)}`);
  return j.rows;
}

/* Resolves when the page's timeline has the data of its whole view and has drawn it
 * (no animation frame pending: the legend and status follow the draw). */
export const settled = (page) => page.waitForFunction(() => {
  const tl = window.nx && window.nx.timeline;
  return tl && tl.full && !tl.pending && tl.covered() && !tl.frame;
});

/* Opens /profile/<name><hash> and waits for its timeline's data. */
export async function openProfile(page, url, name, hash = '') {
  await page.goto(`${url}/profile/${encodeURIComponent(name)}${hash}`);
  await page.waitForFunction(() => window.nx && window.nx.timeline && window.nx.timeline.requests >= 1);
  await settled(page);
}
