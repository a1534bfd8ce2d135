#!/bin/bash
# Modelled on a public NERSC Cori GPU script found by its text (4 tasks per node, one GPU and 10
# CPUs per task, srun; output in sout/%j.out): each task must see its own GPU. `module load`
# lines left out. The original is `#!/bin/bash -l`: a login shell, whose /etc/profile on Debian
# sets PATH anew; the package's /etc/profile.d/pinpoint.sh puts pinpoint's srun first again
# (tests/package), but this test's stand-ins for python would still be dropped.
#SBATCH -C gpu
#SBATCH -A m3363
#SBATCH --time=2:00:00
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=4
#SBATCH --gpus-per-task=1
#SBATCH --cpus-per-task=10
#SBATCH -o sout/%j.out

echo "hello"
srun python main.py
#srun -n1 python -m torch.distributed.launch --nproc_per_node=4 main.py
