#!/bin/bash
# Source: github.com/dghthuong/TextAudioAlignment, run.sh (one GPU by --gpus, memory in M, one
# task of one CPU, its output in job.out, comments after directives, commented-out directives
# with ##). The test runs it first, then array_train.s with --dependency=afterok on it, as
# github.com/bbj-lab/fms-ehrs workflows/1_retokenize_retrain.sh chains its jobs with
# `sbatch --parsable` and `--depend=afterok:`.

### Comment lines start with ## or #+space
### Slurm option lines start with #SBATCH

##SBATCH --time=0-00:05:00   ## days-hours:minutes:seconds
#SBATCH --mem 3000M         ## 3GB ram (hardware ratio is < 4GB/core)
#SBATCH --ntasks=1          ## Not strictly necessary because default is 1
#SBATCH --cpus-per-task=1   ## Use greater than 1 for parallelized jobs
#SBATCH --gpus=1

#SBATCH --job-name=bash ## job name
#SBATCH --output=job.out  ## standard out file

python preprocess.py ./config/preprocess.yaml

echo 'finished'
