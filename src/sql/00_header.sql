-- scipis 0.1: assembled from src/sql/*.sql by the Makefile.
\echo Use "CREATE EXTENSION scipis" to load this file. \quit
