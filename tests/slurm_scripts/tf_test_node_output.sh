#!/bin/bash
# Source: github.com/amourav/OCT-Image-Classification, tensorflow-test.sh (one GPU, 6 CPUs,
# memory in M, output named after the node and job: %N-%j.out). `module load`/`source activate`
# left out.
#SBATCH --gres=gpu:1        # request GPU "generic resource"
#SBATCH --cpus-per-task=6   # maximum CPU cores per GPU request: 6 on Cedar, 16 on Graham.
#SBATCH --mem=32000M        # memory per node
#SBATCH --time=0-00:05      # time (DD-HH:MM)
#SBATCH --output=%N-%j.out  # %N for node name, %j for jobID

python --version
python ./tensorflow-test.py
