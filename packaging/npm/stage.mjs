// Lay out the npm packages of one mcp-fuzz build, ready for `npm pack`:
//
//   node packaging/npm/stage.mjs --version 0.1.0 --target x86_64-unknown-linux-gnu \
//       --binary path/to/mcp-fuzz --out DIR [--min-glibc 2.34]
//
// writes DIR/mcp-fuzz/ (the launcher package, whose optionalDependencies are every package of
// platforms.json at exactly this version) and DIR/<os>-<cpu>[-musl]/ (the package of `--target`,
// holding the binary). `--min-glibc`, required for a glibc target, is the oldest glibc the binary
// runs on (the manylinux tag of its wheel); the launcher checks it. scripts/package.sh stages into
// a fresh DIR.
// Called by scripts/package.sh; see packaging/README.md.
import { chmodSync, copyFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");

function die(message) {
    process.stderr.write(`stage.mjs: error: ${message}\n`);
    process.exit(1);
}

const { values: args } = parseArgs({
    options: {
        version: { type: "string" },
        target: { type: "string" },
        binary: { type: "string" },
        out: { type: "string" },
        "min-glibc": { type: "string" },
    },
});
for (const name of ["version", "target", "binary", "out"]) {
    if (!args[name]) {
        die(`--${name} is required (usage: stage.mjs --version V --target TRIPLE --binary FILE --out DIR)`);
    }
}
if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(args.version)) {
    die(`--version ${args.version} is not a semver version such as 0.1.0`);
}

const readJson = (file) => {
    try {
        return JSON.parse(readFileSync(file, "utf8"));
    } catch (err) {
        die(`cannot read ${path.relative(root, file)}: ${err.message}`);
    }
};

const { platforms } = readJson(path.join(here, "platforms.json"));
for (const p of platforms) {
    const expected = `@mcp-fuzz/${p.os}-${p.cpu}${p.libc === "musl" ? "-musl" : ""}`;
    if (p.package !== expected) {
        die(
            `platforms.json: ${p.package} (${p.target}) must be named ${expected}: ` +
                "the launcher looks packages up by that name",
        );
    }
}
const platform = platforms.find((p) => p.target === args.target);
if (!platform) {
    die(
        `no package for the Rust target ${args.target} in packaging/npm/platforms.json ` +
            `(it has ${platforms.map((p) => p.target).join(", ")}); add an entry to build one`,
    );
}
const minGlibc = args["min-glibc"];
if (platform.libc === "glibc" && !/^\d+\.\d+$/.test(minGlibc || "")) {
    die(`${platform.target} links against glibc: give --min-glibc X.Y, the oldest glibc the binary runs on`);
}
try {
    if (!statSync(args.binary).isFile()) {
        die(`--binary ${args.binary} is not a file`);
    }
} catch (err) {
    die(`--binary ${args.binary}: ${err.message}`);
}

const writeJson = (file, value) => writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
const license = path.join(root, "LICENSE");

// The launcher package: the template with the version and the platform packages filled in.
const mainDir = path.join(args.out, "mcp-fuzz");
mkdirSync(path.join(mainDir, "bin"), { recursive: true });
const main = readJson(path.join(here, "mcp-fuzz", "package.json"));
main.version = args.version;
main.optionalDependencies = Object.fromEntries(platforms.map((p) => [p.package, args.version]));
writeJson(path.join(mainDir, "package.json"), main);
copyFileSync(path.join(here, "mcp-fuzz", "bin", "mcp-fuzz.js"), path.join(mainDir, "bin", "mcp-fuzz.js"));
chmodSync(path.join(mainDir, "bin", "mcp-fuzz.js"), 0o755);
copyFileSync(path.join(here, "mcp-fuzz", "README.md"), path.join(mainDir, "README.md"));
copyFileSync(license, path.join(mainDir, "LICENSE"));

// The package of this platform: the binary, with `os`, `cpu` and `libc` so npm installs it only
// where it runs.
const platDir = path.join(args.out, platform.package.slice("@mcp-fuzz/".length));
mkdirSync(path.join(platDir, "bin"), { recursive: true });
const libcNote = platform.libc ? `, ${platform.libc}` : "";
const plat = {
    name: platform.package,
    version: args.version,
    description: `The ${platform.os}-${platform.cpu}${libcNote} binary of mcp-fuzz; install the mcp-fuzz package, not this one`,
    license: main.license,
    repository: main.repository,
    os: [platform.os],
    cpu: [platform.cpu],
    ...(platform.libc ? { libc: [platform.libc] } : {}),
    files: ["bin/mcp-fuzz"],
    // Yarn PnP would otherwise keep the binary inside a zip archive, where it cannot be executed.
    preferUnplugged: true,
    // Read by the launcher, which refuses to run the binary on an older glibc.
    ...(platform.libc === "glibc" ? { mcpFuzz: { minGlibc } } : {}),
    publishConfig: { access: "public" },
};
writeJson(path.join(platDir, "package.json"), plat);
copyFileSync(args.binary, path.join(platDir, "bin", "mcp-fuzz"));
chmodSync(path.join(platDir, "bin", "mcp-fuzz"), 0o755);
const readme = readFileSync(path.join(here, "platform", "README.md"), "utf8")
    .replaceAll("@PACKAGE@", platform.package)
    .replaceAll("@OS@", platform.os)
    .replaceAll("@CPU@", platform.cpu)
    .replaceAll("@LIBC@", platform.libc ? ` (${platform.libc})` : "")
    .replaceAll("@TARGET@", platform.target)
    .replaceAll("@VERSION@", args.version);
writeFileSync(path.join(platDir, "README.md"), readme);
copyFileSync(license, path.join(platDir, "LICENSE"));

process.stdout.write(`${mainDir}\n${platDir}\n`);
