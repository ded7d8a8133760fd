#!/usr/bin/env node
// The `mcp-fuzz` command of the npm package: runs the native binary of this platform.
//
// The binary is not in this package. It is in one per-platform package (`@mcp-fuzz/linux-x64`,
// ...), listed in this package's optionalDependencies; npm installs only the one whose `os`,
// `cpu` and `libc` fields match the machine (the layout of biome, esbuild and the Codex CLI).
// This file finds that package, runs its binary with our arguments and standard streams, and
// exits exactly as the binary did: with its exit code (0 clean, 1 findings, 2 usage error,
// 3 server failed to start, 4 no tool tested, 130 interrupted, ...), or killed by its signal.
//
// The launcher's own failures use the shell's codes, since the binary never ran: 127 when there
// is no binary for this platform, 126 when it cannot be executed.
// See: packaging/README.md.
"use strict";

const { spawn } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const pkg = require("../package.json");

const NOT_FOUND = 127;
const CANNOT_EXECUTE = 126;

// The signals forwarded to the binary. A terminal's Ctrl-C reaches the whole foreground process
// group, the binary included, and mcp-fuzz takes a second SIGINT like the first; but a supervisor
// (CI cancelling a job, `timeout`, `kill`) signals only this process, and without forwarding the
// binary would run on. SIGUSR1 is left alone: Node reserves it for its inspector.
const FORWARDED = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR2"];

function fail(code, message) {
    process.stderr.write(`mcp-fuzz: error: ${message}\n`);
    process.exit(code);
}

// The glibc version Node runs on ("2.36"), or null on musl. Node sets `glibcVersionRuntime` in
// its report header only on glibc; the report takes some tens of milliseconds.
function glibcVersion() {
    try {
        process.report.excludeNetwork = true;
        return process.report.getReport().header.glibcVersionRuntime || null;
    } catch {
        return null;
    }
}

function isMusl() {
    return glibcVersion() === null;
}

// "2.34" < "2.36", numerically per component.
function olderThan(have, want) {
    const a = have.split(".").map(Number);
    const b = want.split(".").map(Number);
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
        if ((a[i] || 0) !== (b[i] || 0)) {
            return (a[i] || 0) < (b[i] || 0);
        }
    }
    return false;
}

// The package name's platform part (`linux-x64`, `linux-x64-musl`) and its description.
function platformName() {
    const musl = process.platform === "linux" && isMusl();
    return {
        name: `${process.platform}-${process.arch}${musl ? "-musl" : ""}`,
        described: `${process.platform}-${process.arch}${musl ? " with musl libc" : ""}`,
    };
}

function supportedPackages() {
    return Object.keys(pkg.optionalDependencies || {}).filter((p) => p.startsWith("@mcp-fuzz/"));
}

// The binary of the per-platform package installed for this machine, or a clear error.
function findBinary() {
    const override = process.env.MCP_FUZZ_BINARY;
    if (override) {
        return override;
    }
    // On Linux the glibc package comes first; only a musl machine goes without it.
    const base = `@mcp-fuzz/${process.platform}-${process.arch}`;
    const candidates = [base, `${base}-musl`].filter((p) => supportedPackages().includes(p));
    for (const candidate of candidates) {
        let dir;
        try {
            dir = path.dirname(require.resolve(`${candidate}/package.json`));
        } catch {
            continue;
        }
        const found = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
        if (found.version !== pkg.version) {
            fail(
                NOT_FOUND,
                `${candidate} is version ${found.version} but mcp-fuzz is ${pkg.version} ` +
                    `(in ${dir}); reinstall both: npm install mcp-fuzz@${pkg.version}`,
            );
        }
        // A binary linked against a newer glibc would fail in the dynamic loader with exit
        // status 1, which reads as "findings"; say what is wrong instead.
        const minGlibc = found.mcpFuzz && found.mcpFuzz.minGlibc;
        const have = minGlibc && process.platform === "linux" ? glibcVersion() : null;
        if (have && olderThan(have, minGlibc)) {
            fail(
                NOT_FOUND,
                `the binary in ${candidate}@${found.version} needs glibc ${minGlibc} or newer, ` +
                    `and this machine has glibc ${have}.\n` +
                    "Build mcp-fuzz from source with Rust (https://rustup.rs): " +
                    "`cargo install --path .` in a checkout of mcp-fuzz; " +
                    "then set MCP_FUZZ_BINARY=/path/to/mcp-fuzz or run it directly.",
            );
        }
        return path.join(dir, "bin", "mcp-fuzz");
    }
    const { name, described } = platformName();
    const wanted = `@mcp-fuzz/${name}`;
    if (!supportedPackages().includes(wanted)) {
        const have = supportedPackages()
            .map((p) => p.slice("@mcp-fuzz/".length))
            .join(", ");
        fail(
            NOT_FOUND,
            `mcp-fuzz ${pkg.version} has no prebuilt binary for ${described} ` +
                `(there are binaries for ${have}).\n` +
                "Build it from source with Rust (https://rustup.rs): " +
                "`cargo install --path .` in a checkout of mcp-fuzz, " +
                "or install the Python package (`pipx install mcp-fuzz`) where it has a wheel " +
                "for this platform.\n" +
                "To use a binary you built, set MCP_FUZZ_BINARY=/path/to/mcp-fuzz.",
        );
    }
    fail(
        NOT_FOUND,
        `the binary for this platform (${name}) is not installed: the package ` +
            `${wanted}@${pkg.version} is missing.\n` +
            "npm installs it with mcp-fuzz as an optional dependency, so it is missing when " +
            "optional dependencies were left out (--omit=optional, --no-optional, " +
            "`omit=optional` in an .npmrc) or the lockfile was written without it.\n" +
            `Install it: npm install ${wanted}@${pkg.version}\n` +
            `or reinstall with optional dependencies: npm install mcp-fuzz@${pkg.version} --include=optional`,
    );
}

function run() {
    const binary = findBinary();
    const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });

    const forward = (signal) => {
        // Once the child has exited there is nobody to forward to (and its pid may be reused).
        if (child.exitCode === null && child.signalCode === null) {
            child.kill(signal);
        }
    };
    for (const signal of FORWARDED) {
        process.on(signal, forward);
    }

    child.on("error", (err) => {
        if (err.code === "ENOENT") {
            fail(NOT_FOUND, `cannot run ${binary}: it does not exist (${err.message})`);
        }
        fail(
            CANNOT_EXECUTE,
            `cannot run ${binary}: ${err.message}` +
                (err.code === "EACCES" ? "; is it executable (chmod +x)?" : ""),
        );
    });

    child.on("exit", (code, signal) => {
        if (signal === null) {
            process.exit(code);
        }
        // Die of the same signal, so whoever runs us sees what it would have seen without us
        // (a shell's 128 + n, a supervisor's "killed by SIGTERM"). With our handlers gone the
        // default action applies; a signal Node ignores (SIGPIPE) falls through to the shell's
        // encoding of it.
        for (const s of FORWARDED) {
            process.removeAllListeners(s);
        }
        process.kill(process.pid, signal);
        setTimeout(() => process.exit(128 + (os.constants.signals[signal] || 0)), 100);
    });
}

run();
