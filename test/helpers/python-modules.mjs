// Why a suite that needs Python modules cannot run here, or false: the
// GPU suites need PyTorch, Triton and a usable GPU; some also pytest-xdist.
import { execFileSync } from 'node:child_process';

/** False when python3 imports every module and `check` holds, else the `why` to skip with. */
export function pythonMissing(modules, why, check = 'True') {
  try {
    execFileSync('python3', ['-c', `import ${modules.join(', ')}; assert ${check}`], { stdio: 'ignore' });
    return false;
  } catch {
    return why;
  }
}

/** PyTorch and Triton with a GPU they can use. */
export const noTorchGpu = () =>
  pythonMissing(['torch', 'triton'], 'no python3 with PyTorch, Triton and a usable GPU', 'torch.cuda.is_available()');
