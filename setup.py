"Packaging for iclr26nb: every setting and dependency is read from settings.ini (declared once)."
from configparser import ConfigParser
import setuptools

cfg = ConfigParser(delimiters=['='])
cfg.read('settings.ini', encoding='utf-8')
cfg = cfg['DEFAULT']
reqs = cfg.get('requirements', '').split()
extras = {k[:-len('_requirements')]: cfg[k].split() for k in cfg
          if k.endswith('_requirements') and k not in ('requirements', 'dev_requirements')}
extras['dev'] = sorted({r for v in extras.values() for r in v}) + cfg.get('dev_requirements', '').split()
scripts = cfg.get('console_scripts', '').split()

setuptools.setup(
    name=cfg['lib_name'], version=cfg['version'], description=cfg['description'],
    author=cfg['author'], author_email=cfg['author_email'], license='Apache-2.0',
    packages=setuptools.find_packages(include=['iclr26nb', 'iclr26nb.*']),
    include_package_data=True, install_requires=reqs, extras_require=extras,
    python_requires='>=' + cfg['min_python'], zip_safe=False,
    entry_points={'console_scripts': scripts, 'nbdev': [f"{cfg['lib_path']}={cfg['lib_path']}._modidx:d"]},
    long_description=open('README.md', encoding='utf-8').read(), long_description_content_type='text/markdown',
)
