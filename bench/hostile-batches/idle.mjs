// idle.mjs: does nothing for 3 s: the probe's figures on an idle service, the noise floor of the run.
export default async function () {
  await new Promise((r) => setTimeout(r, 3000));
  return 'idle';
}
