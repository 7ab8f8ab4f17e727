import type { GlobalConfig } from '../internal/config/global.js';
import { addSecret, maskSecrets } from '../internal/secrets.js';
import type { RunTelemetry } from '../internal/telemetry/export.js';
import { traceSettings } from '../internal/telemetry/settings.js';
import { stderr } from './stdio.js';

/**
 * Traces, when an OpenTelemetry variable asks for them (telemetry/): nothing of OpenTelemetry is
 * loaded otherwise. Spans printed by the console exporter go to stderr: stdout is the answer's.
 * `axe run` and batches (`--map`, `batches resume`) open their traces here.
 */
export async function openTelemetry(
  env: NodeJS.ProcessEnv,
  runId: () => string | undefined,
  globalConfig: () => Promise<GlobalConfig>,
): Promise<RunTelemetry | undefined> {
  const { settings, warnings } = traceSettings(env);
  for (const warning of warnings) stderr.write(`Warning: ${warning}\n`);
  if (!settings) return undefined;
  // `[telemetry] propagate`, known before the first model call (the run reads config.toml first);
  // a config.toml that cannot be read is the run's to report.
  let propagate = false;
  globalConfig().then(
    (config) => {
      propagate = config.telemetryPropagate === true;
    },
    () => {},
  );
  const { startTelemetry } = await import('../internal/telemetry/export.js');
  const telemetry = await startTelemetry(settings, {
    env,
    write: (line) => stderr.write(line),
    secrets: { add: addSecret, mask: maskSecrets },
    runId,
    propagate: () => propagate,
  });
  for (const warning of telemetry.warnings) stderr.write(`Warning: ${maskSecrets(warning)}\n`);
  return telemetry;
}

/** Sends the spans left, within the bound: one warning on stderr when they could not all leave. */
export async function closeTelemetry(telemetry: RunTelemetry | undefined): Promise<void> {
  const dropped = await telemetry?.close();
  if (dropped) stderr.write(`Warning: ${maskSecrets(dropped)}\n`);
}
