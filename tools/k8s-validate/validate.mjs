// Validates YAML files that migserve writes or ships: Kubernetes objects
// against the Kubernetes OpenAPI schemas (the kubernetes-models package),
// Gateway API objects and the Prometheus Operator's PodMonitor and
// ServiceMonitor against theirs (@kubernetes-models/gateway-api,
// @kubernetes-models/prometheus-operator), migserve's own ServingTarget
// against the structural schema of deploy/base/crd.yaml (with Ajv, which
// kubernetes-models validates with; a field the schema does not know is
// an error, as kubectl's strict field validation makes it),
// mig-parted configs against mig-parted's v1 spec (api/spec/v1/spec.go, as
// summarized in notes/kubernetes.md 2.1). Usage: node validate.mjs
// [--restricted] FILE...; with --restricted, every pod (a Pod, or the
// template of a Deployment, DaemonSet, StatefulSet or Job) must also meet
// Pod Security "restricted". Prints each problem and a count per file;
// exits 1 if any is invalid.
import Ajv from "ajv";
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

const PROFILE = /^([0-9]+c\.)?[0-9]+g\.[0-9]+gb(\+me)?$/;

function checkMigParted(doc) {
  const problems = [];
  if (doc.version !== "v1") problems.push(`version: want "v1", got ${JSON.stringify(doc.version)}`);
  const configs = doc["mig-configs"];
  if (typeof configs !== "object" || configs === null || Array.isArray(configs) ||
      Object.keys(configs).length === 0) {
    return [...problems, "mig-configs: want a non-empty map"];
  }
  for (const [name, entries] of Object.entries(configs)) {
    if (!Array.isArray(entries) || entries.length === 0) {
      problems.push(`mig-configs.${name}: want a non-empty list`);
      continue;
    }
    entries.forEach((e, i) => {
      const at = `mig-configs.${name}[${i}]`;
      const known = new Set(["device-filter", "devices", "mig-enabled", "mig-devices"]);
      for (const k of Object.keys(e)) if (!known.has(k)) problems.push(`${at}.${k}: unknown field`);
      const d = e.devices;
      if (!(d === "all" || (Array.isArray(d) && d.length > 0 && d.every(Number.isInteger)))) {
        problems.push(`${at}.devices: want "all" or a list of GPU indices`);
      }
      if (typeof e["mig-enabled"] !== "boolean") problems.push(`${at}.mig-enabled: want a boolean`);
      const m = e["mig-devices"];
      if (e["mig-enabled"] === true) {
        if (typeof m !== "object" || m === null || Array.isArray(m)) {
          problems.push(`${at}.mig-devices: want a map of profile to count`);
        } else {
          for (const [p, n] of Object.entries(m)) {
            if (!PROFILE.test(p)) problems.push(`${at}.mig-devices: "${p}" is not a profile name`);
            if (!Number.isInteger(n) || n < 0) problems.push(`${at}.mig-devices.${p}: want a count`);
          }
        }
      } else if (m !== undefined && m !== null && Object.keys(m).length > 0) {
        problems.push(`${at}.mig-devices: must be empty when mig-enabled is false`);
      }
    });
  }
  return problems;
}

// The CRD's OpenAPI v3 schema as JSON Schema: nullable as a type, and no
// field the schema does not name unless it preserves unknown fields.
function jsonSchemaOf(schema, root = true) {
  if (typeof schema !== "object" || schema === null) return schema;
  const out = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k.startsWith("x-kubernetes-") || k === "nullable" || k === "description") continue;
    if (k === "properties") {
      out.properties = Object.fromEntries(
        Object.entries(v).map(([name, s]) => [name, jsonSchemaOf(s, false)]));
    } else if (k === "items" || k === "additionalProperties") {
      out[k] = jsonSchemaOf(v, false);
    } else if (k === "format") {
      continue;  // date-time and the like: the API server's, not checked here
    } else {
      out[k] = v;
    }
  }
  if (schema.nullable && typeof schema.type === "string") out.type = [schema.type, "null"];
  if (schema.properties && !schema["x-kubernetes-preserve-unknown-fields"] &&
      !("additionalProperties" in schema)) {
    out.additionalProperties = false;
  }
  if (root && out.properties) {
    // The API server's own fields.
    for (const f of ["apiVersion", "kind", "metadata"]) out.properties[f] ??= {};
  }
  return out;
}

let customValidators = null;
// migserve's custom resources (deploy/base/crd.yaml), by apiVersion/kind.
function customValidator(apiVersion, kind) {
  if (customValidators === null) {
    customValidators = new Map();
    const ajv = new Ajv({ allErrors: true, strict: false });
    const text = readFileSync(new URL("../../deploy/base/crd.yaml", import.meta.url), "utf8");
    for (const crd of parseAllDocuments(text).map((d) => d.toJS())) {
      for (const v of crd.spec.versions) {
        customValidators.set(`${crd.spec.group}/${v.name}/${crd.spec.names.kind}`,
          ajv.compile(jsonSchemaOf(v.schema.openAPIV3Schema)));
      }
    }
  }
  return customValidators.get(`${apiVersion}/${kind}`);
}

async function checkKubernetes(doc) {
  const { apiVersion, kind } = doc;
  if (typeof apiVersion !== "string" || typeof kind !== "string") {
    return ["apiVersion and kind are required"];
  }
  // Gateway API and the Prometheus Operator's CRDs have packages of their
  // own; everything else is Kubernetes'.
  const packages = {
    "gateway.networking.k8s.io/": "@kubernetes-models/gateway-api",
    "monitoring.coreos.com/": "@kubernetes-models/prometheus-operator",
  };
  if (apiVersion.startsWith("migserve.io/")) {
    const validate = customValidator(apiVersion, kind);
    if (!validate) return [`unknown kind ${kind} in ${apiVersion}`];
    if (validate(doc)) return [];
    return validate.errors.map((e) =>
      `${e.instancePath || "/"} ${e.message}${e.params?.additionalProperty ? `: ${e.params.additionalProperty}` : ""}`);
  }
  const prefix = Object.keys(packages).find((p) => apiVersion.startsWith(p));
  let module;
  try {
    module = await import(`${prefix ? packages[prefix] : "kubernetes-models"}/${apiVersion}`);
  } catch {
    return [`unknown apiVersion ${apiVersion}`];
  }
  const Model = module[kind];
  if (!Model) return [`unknown kind ${kind} in ${apiVersion}`];
  try {
    new Model(doc).validate();
    return [];
  } catch (error) {
    return [error.message];
  }
}

// The Pod Security Standard "restricted" (kubernetes.io/docs/concepts/
// security/pod-security-standards): non-root, no privilege escalation,
// every capability dropped (NET_BIND_SERVICE may be added back), a
// RuntimeDefault or Localhost seccomp profile, nothing privileged and no
// host namespaces or paths.
function checkRestricted(doc) {
  const spec = doc.kind === "Pod" ? doc.spec : doc.spec?.template?.spec;
  if (!spec) return [];
  const problems = [];
  const pod = spec.securityContext ?? {};
  for (const host of ["hostNetwork", "hostPID", "hostIPC"]) {
    if (spec[host]) problems.push(`spec.${host}: must not be set`);
  }
  for (const v of spec.volumes ?? []) {
    if (v.hostPath) problems.push(`volume ${v.name}: hostPath is not allowed`);
  }
  const containers = [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
  for (const c of containers) {
    const at = `container ${c.name}`;
    const sc = c.securityContext ?? {};
    if (sc.privileged) problems.push(`${at}: privileged`);
    if (sc.allowPrivilegeEscalation !== false) {
      problems.push(`${at}: allowPrivilegeEscalation must be false`);
    }
    if (!(sc.capabilities?.drop ?? []).includes("ALL")) {
      problems.push(`${at}: capabilities.drop must include ALL`);
    }
    for (const cap of sc.capabilities?.add ?? []) {
      if (cap !== "NET_BIND_SERVICE") problems.push(`${at}: adds capability ${cap}`);
    }
    if ((sc.runAsNonRoot ?? pod.runAsNonRoot) !== true) {
      problems.push(`${at}: runAsNonRoot must be true`);
    }
    if ((sc.runAsUser ?? pod.runAsUser) === 0) problems.push(`${at}: runs as root`);
    const seccomp = (sc.seccompProfile ?? pod.seccompProfile)?.type;
    if (seccomp !== "RuntimeDefault" && seccomp !== "Localhost") {
      problems.push(`${at}: seccompProfile.type must be RuntimeDefault or Localhost`);
    }
  }
  return problems;
}

const args = process.argv.slice(2);
const restricted = args[0] === "--restricted";
if (restricted) args.shift();
let bad = 0;
for (const file of args) {
  let good = 0;
  const docs = parseAllDocuments(readFileSync(file, "utf8"));
  for (const [i, parsed] of docs.entries()) {
    const where = `${file}: document ${i + 1}`;
    if (parsed.errors.length > 0) {
      console.log(`${where}: YAML error: ${parsed.errors[0].message}`);
      ++bad;
      continue;
    }
    const doc = parsed.toJS();
    if (doc === null) continue;
    const problems = "mig-configs" in doc ? checkMigParted(doc) : await checkKubernetes(doc);
    if (restricted && !("mig-configs" in doc)) problems.push(...checkRestricted(doc));
    // The GPU Operator's MIG manager config: a mig-parted config in a
    // ConfigMap's config.yaml.
    if (doc.kind === "ConfigMap" && typeof doc.data?.["config.yaml"] === "string") {
      for (const p of checkMigParted(parseAllDocuments(doc.data["config.yaml"])[0].toJS())) {
        problems.push(`data.config.yaml: ${p}`);
      }
    }
    const name = doc.kind ? `${doc.kind} ${doc.metadata?.name ?? ""}` : "mig-parted config";
    if (problems.length === 0) {
      ++good;
    } else {
      for (const p of problems) console.log(`${where} (${name}): ${p}`);
      ++bad;
    }
  }
  console.log(`${file}: ${good} of ${docs.length} documents valid`);
}
process.exit(bad === 0 ? 0 : 1);
