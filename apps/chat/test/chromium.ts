import { existsSync } from 'node:fs';

/** The Chromium to drive (never downloaded); override with LOOM_CHROMIUM. */
export const CHROMIUM = process.env.LOOM_CHROMIUM ?? '/usr/bin/chromium';

/** Headless, with WebGPU on SwiftShader, and nothing fetched from the network. */
export const CHROMIUM_FLAGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu-sandbox',
  '--enable-unsafe-webgpu',
  '--enable-features=Vulkan',
  '--use-angle=swiftshader',
  '--use-webgpu-adapter=swiftshader',
  '--enable-unsafe-swiftshader',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

/** Whether Chromium is there; without it a browser test is skipped, except on CI (`CI=true`), where it fails. */
export function haveChromium(test: string): boolean {
  if (existsSync(CHROMIUM)) return true;
  const message = `no Chromium at ${CHROMIUM}: apt-get install chromium, or set LOOM_CHROMIUM to its path`;
  if (process.env.CI === 'true') throw new Error(`${test} must run on CI: ${message}`);
  console.warn(`skipping ${test}: ${message}`);
  return false;
}
