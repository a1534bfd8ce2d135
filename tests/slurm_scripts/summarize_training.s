#!/bin/bash
# Source: github.com/isaachenrion/jets, run.sh (its summarize_training.s runs once every task of
# the array it is given has completed: --dependency=afterok:ARRAY_ID).
#SBATCH --time=0:10:00
#SBATCH --mem=1G
#SBATCH --output=summary_%j.out

python summarize.py "$1"
